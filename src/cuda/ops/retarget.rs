//! GPU retarget (to be written).
