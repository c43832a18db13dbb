//! GPU integral (to be written).
