//! GPU adaptive (to be written).
