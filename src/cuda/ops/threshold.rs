//! GPU threshold (to be written).
