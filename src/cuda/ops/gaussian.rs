//! GPU gaussian (to be written).
