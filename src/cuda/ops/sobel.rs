//! GPU sobel (to be written).
