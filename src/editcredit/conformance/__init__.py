"""The grader's conformance suite: real projects graded as their own test runners grade them."""
