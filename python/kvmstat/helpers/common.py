"""What both families' helpers share: bounded walks."""

# A list longer than this is a cycle or a corrupt pointer, not a kernel.
WALK_LIMIT = 10_000_000


class WalkError(Exception):
    """A list walk that did not end: a cycle, or more than WALK_LIMIT items."""
