//! GPU warp (to be written).
