//! GPU yuv (to be written).
