"""Images built here and ``make dist``'s release artifacts, chart READMEs."""
