"""Task suites: the task record, the synthetic minibugs generator, importers and freezing."""
