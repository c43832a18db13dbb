//! GPU boxfilter (to be written).
