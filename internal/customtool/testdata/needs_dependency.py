import massgen_no_such_dependency  # noqa: F401


def uses_it() -> str:
    return "unreachable"
