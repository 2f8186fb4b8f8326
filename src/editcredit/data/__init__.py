"""Task suites as data: the task record, the minibugs seed pool, mutations and splits, and the
frozen suites (the builders that run the sandbox are editcredit.suites)."""
