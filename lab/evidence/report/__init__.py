"""What a person reads in an evidence folder: report.md with its diagrams, and report.html."""
