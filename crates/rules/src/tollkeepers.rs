//! The Tollkeepers (T1–T10). (In progress.)
