//! GPU equalize (to be written).
