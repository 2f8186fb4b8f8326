"""Suite builders: the generators and importers that make a suite's tasks and validate them by
running the sandbox and the grader (minibugs, multibugs, the image suite, SWE-bench imports,
``build`` dispatching on ``suites.<name>.generator``). They sit above grading; ``editcredit.data``
keeps the task records, the pools and the frozen suites they write and everything else reads."""
