"""MassGen's context_params decorator: the named parameters are filled in by massgen at call
time (agent_id, agent_cwd) and hidden from the model."""


def context_params(*names):
    def mark(func):
        func.__context_params__ = set(names)
        return func

    return mark
