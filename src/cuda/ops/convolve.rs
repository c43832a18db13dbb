//! GPU convolve (to be written).
