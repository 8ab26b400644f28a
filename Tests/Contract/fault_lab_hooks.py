"""Schemathesis hooks for the fault-lab pass of scripts/contract-test.sh.

- Every example with a well-formed group name is aimed at the group the script seeded with an
  image ("seeded"), so that each kind has a generation to break rather than answering 409.
- A slow-publish holds that group's lock for `seconds` (up to 60), and each later example would
  be refused 409 (`group-held`) for the rest of the hold, so holds are capped at 1 s: a fault
  waits for a hold that ends within a second, so the examples that follow are still written.

Both only turn a value the schema accepts into another one it accepts, so no example changes
from valid to invalid or back.
"""
import re

import schemathesis

SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


@schemathesis.hook
def before_call(context, case, kwargs):
    group = (case.path_parameters or {}).get("group")
    if isinstance(group, str) and SAFE_NAME.match(group) and group not in (".", ".."):
        case.path_parameters["group"] = "seeded"
    body = case.body
    if isinstance(body, dict) and body.get("kind") == "slow-publish":
        seconds = body.get("seconds")
        if type(seconds) in (int, float) and 1 < seconds <= 60 and float(seconds).is_integer():
            body["seconds"] = 1
