"""Where an image keeps the repository's own environment, and the environment variables of that
environment activated.

SWE-bench's images keep the repository's interpreter and its dependencies in a conda environment
(``/opt/miniconda3/envs/testbed``) that only ``.bashrc`` activates; the image's ``python3`` is
another interpreter. Both the grading runner (guest code mounted at ``/grader``, which imports
this module) and the bash tool's helper (``editcredit.agent.bash_actions``, whose program text
begins with this file's text) read the places from here, so a command the agent runs and the
graded tests see the same environment. Standard library only; Python 3.6 and later.
"""

import os

#: Where an image keeps the repository's own interpreter apart from its ``python3`` (SWE-bench's
#: images: a conda environment that only ``.bashrc`` activates), first match wins.
REPOSITORY_PYTHONS = ("/opt/miniconda3/envs/testbed/bin/python",)


def environment_prefix(python):
    """The environment directory of an interpreter path (``PREFIX/bin/python``)."""
    return os.path.dirname(os.path.dirname(python))


def image_environment():
    """The prefix of the first environment of :data:`REPOSITORY_PYTHONS` whose interpreter this
    filesystem has (executable), or None."""
    for python in REPOSITORY_PYTHONS:
        if os.access(python, os.X_OK):
            return environment_prefix(python)
    return None


def activated(environ, prefix):
    """A copy of ``environ`` as activating the environment at ``prefix`` leaves it: its ``bin``
    first on ``PATH``, ``CONDA_PREFIX`` and ``CONDA_DEFAULT_ENV`` naming it."""
    env = dict(environ)
    path = environ.get("PATH", "")
    env["PATH"] = os.path.join(prefix, "bin") + (os.pathsep + path if path else "")
    env["CONDA_PREFIX"] = prefix
    env["CONDA_DEFAULT_ENV"] = os.path.basename(prefix)
    return env
