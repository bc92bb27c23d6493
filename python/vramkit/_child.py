"""The child of try_load for a function: `python -m vramkit._child FILE` loads the pickled
function, calls it with the strategy vramkit try chose for this attempt, and reports its
return value as the attempt's result line. An exception is exit 1 with its traceback on
stderr (which vramkit try reads for OOM and CUDA errors)."""

import json
import os
import pickle
import sys
import traceback


def main(argv):
    with open(argv[1], "rb") as f:
        fn = pickle.load(f)
    info = {
        "strategy": os.environ.get("VRAMKIT_STRATEGY"),
        "device": os.environ.get("VRAMKIT_DEVICE"),
        "dtype": os.environ.get("VRAMKIT_DTYPE"),
        "attempt": int(os.environ.get("VRAMKIT_ATTEMPT", "0") or 0),
    }
    try:
        value = fn(info)
    except BaseException:  # the attempt failed: say why where vramkit try reads it
        traceback.print_exc()
        sys.stderr.flush()
        return 1
    if value is not None:
        if not isinstance(value, dict):  # the result line holds a JSON object
            value = {"value": value}
        sys.stdout.write("VRAMKIT_RESULT " + json.dumps(value) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
