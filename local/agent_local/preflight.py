"""Before an `agent` command runs a turn: the model provider's settings as the local stack would give
them to its handlers, checked by the provider itself (roles/base.py: ModelProvider.check_settings).

A misconfigured provider would otherwise hand every turn to a person as `system_error`, with the
cause visible only in `agent trace`.
"""

from __future__ import annotations

import os
from pathlib import Path


def model_settings_problem(home: Path, overrides: dict[str, str]) -> str | None:
    """What keeps the configured provider from running a turn on a stack of `home` with `overrides`
    (validated template parameters), as a message for the user; None when nothing does."""
    from agent_local.stack import LocalStack
    from agent_local.template import referenced_parameters
    from insurance_agent.config import model_settings
    from insurance_agent.errors import ConfigurationError
    from insurance_agent.roles.base import model_settings_problems

    stack = LocalStack(home, parameters=overrides)
    given = stack.function_environment()
    environ = {**os.environ, **given}
    try:
        settings = model_settings(environ)
        problems = model_settings_problems(settings, environ)
    except ConfigurationError as error:
        return f"{error}; no turn was run"
    if not problems:
        return None
    template_env = stack.template["Globals"]["Function"]["Environment"]["Variables"]
    lines = [f"model provider {settings.provider!r} is not configured, so no turn was run:"]
    for problem in problems:
        name = problem.variable
        lines.append(f"  {name} {problem.problem}: {problem.purpose}.")
        if problem.template_parameter:
            lines.append(f"    Set it with --parameter-overrides {problem.template_parameter}=VALUE "
                         f"(or the environment variable {name}).")
        else:
            lines.append(f"    Set the environment variable {name}.")
        deciding = referenced_parameters(stack.template, template_env.get(name)) & stack.overrides.keys()
        if os.environ.get(name) and name in given and given[name] != os.environ[name] and deciding:
            # An override of a parameter the template derives the variable from makes the template's value win.
            lines.append(f"    {name} of the environment is not used: with --parameter-overrides "
                         f"{', '.join(sorted(deciding))} the template sets it; give its parameter instead.")
    return "\n".join(lines)
