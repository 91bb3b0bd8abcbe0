//! Records: reading, writing, replaying and scoring.
