"""Before an `agent` command runs a turn: the model provider's settings as the local stack would give
them to its handlers, checked by the provider itself (roles/base.py: ModelProvider.check_settings).

Then, with the settings complete, what the model service says of them (ModelProvider.check_service):
a server that rejects the configured structured-output mode, asked in one tiny request per model.

A misconfigured provider would otherwise hand every turn to a person as `system_error`, with the
cause visible only in `agent trace`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_local.stack import LocalStack
    from insurance_agent.config import SettingProblem


def model_settings_problem(home: Path, overrides: dict[str, str]) -> str | None:
    """What keeps the configured provider from running a turn on a stack of `home` with `overrides`
    (validated template parameters), as a message for the user; None when nothing does."""
    from agent_local.stack import LocalStack, StackError
    from insurance_agent.config import ROLES, model_settings
    from insurance_agent.errors import ConfigurationError
    from insurance_agent.roles.base import role_problems, service_problems

    stack = LocalStack(home, parameters=overrides)
    try:
        given = stack.function_environment()
    except StackError as error:  # a role map this one process cannot serve
        return f"{error}; no turn was run"
    environ = {**os.environ, **given}
    try:
        settings = model_settings(environ)
        # Every provider a role is sent to (ROLE_PROVIDERS), each checked once.
        found = role_problems(settings, environ)
    except ConfigurationError as error:
        return f"{error}; no turn was run"
    state = "is not configured"
    if not found:
        # Before any turn, a slow server may take its time: a few of its timeouts, not a cold start's bound.
        found = service_problems(settings, ROLES, seconds=3 * settings.timeout_seconds)
        state = "does not work with its server as configured"
    if not found:
        return None
    template_env = stack.template["Globals"]["Function"]["Environment"]["Variables"]
    lines = []
    for provider, problems in found.items():
        roles = [role for role in ROLES if settings.provider_for(role) == provider]
        served = "" if len(roles) == len(ROLES) else f" (serving {', '.join(roles)})"
        lines += [f"model provider {provider!r}{served} {state}, so no turn was run:",
                  *_problem_lines(problems, stack, given, template_env)]
    return "\n".join(lines)


def _problem_lines(problems: list[SettingProblem], stack: LocalStack, given: dict[str, str],
                   template_env: dict[str, Any]) -> list[str]:
    """How to set each of one provider's missing or malformed settings."""
    from agent_local.template import referenced_parameters

    lines = []
    for problem in problems:
        name = problem.variable
        lines.append(f"  {name} {problem.problem}: {problem.purpose}.")
        if problem.template_parameter:
            value = problem.value or "VALUE"
            lines.append(f"    Set it with --parameter-overrides {problem.template_parameter}={value} "
                         f"(or the environment variable {name}).")
        else:
            lines.append(f"    Set the environment variable {name}.")
        deciding = referenced_parameters(stack.template, template_env.get(name)) & stack.overrides.keys()
        if os.environ.get(name) and name in given and given[name] != os.environ[name] and deciding:
            # An override of a parameter the template derives the variable from makes the template's value win.
            lines.append(f"    {name} of the environment is not used: with --parameter-overrides "
                         f"{', '.join(sorted(deciding))} the template sets it; give its parameter instead.")
    return lines
