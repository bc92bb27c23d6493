"""`python -m vramkit ARGS` and the `vramkit` console script: the vramkit command installed with
this package (its bin/, or $VRAMKIT_EXE), run with ARGS in place of this process."""

import os
import sys

from ._lib import VramkitError, exe_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        exe = exe_path()
    except VramkitError as e:
        sys.stderr.write("vramkit: %s\n" % e.message)
        return 3
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(exe, [exe] + args)
    except OSError as e:
        sys.stderr.write("vramkit: cannot run %s: %s\n" % (exe, e.strerror))
        return 3
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
