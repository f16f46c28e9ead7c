"""Re-execution: running an archived folder's scenarios and explorations again, contained, and comparing."""
