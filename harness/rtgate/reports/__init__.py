"""What users read: text, verdict JSON, JUnit, HTML, plots, KCIDB, and the worst-case estimate."""
