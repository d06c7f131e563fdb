# A custom tool file for the config tests: only its existence is checked here.
def add(a: int, b: int = 1) -> str:
    """Add two numbers."""
    return str(a + b)
