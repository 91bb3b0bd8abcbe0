//! Unit tests of the renderer.
