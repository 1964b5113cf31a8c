//! Scenario files: a setup, commands and expectations, as JSON. (In progress.)
