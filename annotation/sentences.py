"""The natural-language sentence of a structured gold step.

Annotators pick an action type, an element and a value; the step's text is this sentence, in
the style of the published human gold ("Type 'Harvard University' into the 'To' textbox"), so
free-text and structured gold read the same to a judge. `static/js/gold-editor.js` renders the
same sentence live while typing; tests check that both agree.
"""

ACTION_TYPES = (
    "click",
    "type",
    "hover",
    "press",
    "scroll",
    "select",
    "goto",
    "go_back",
    "go_forward",
    "new_tab",
    "tab_focus",
    "close_tab",
    "stop",
)


def _target(role: str, name: str) -> str:
    if name and role:
        return f"the '{name}' {role}"
    if name:
        return f"'{name}'"
    if role:
        return f"the {role}"
    return "the element"


def step_sentence(action_type: str, element_role: str = "", element_name: str = "", value: str = "") -> str:
    """One sentence for a structured step; unknown action types are refused."""
    role, name, value = element_role.strip(), element_name.strip(), value.strip()
    target = _target(role, name)
    match action_type:
        case "click":
            return f"Click on {target}"
        case "hover":
            return f"Hover over {target}"
        case "type":
            return f"Type '{value}' into {target}"
        case "select":
            return f"Select {target} and choose '{value}'"
        case "press":
            return f"Press {value or 'Enter'}"
        case "scroll":
            return f"Scroll {value or 'down'}"
        case "goto":
            return f"Go to {value}" if value else "Go to a URL"
        case "go_back":
            return "Go back to the previous page"
        case "go_forward":
            return "Go forward to the next page"
        case "new_tab":
            return "Open a new tab"
        case "tab_focus":
            return f"Switch to tab {value}" if value else "Switch tab"
        case "close_tab":
            return "Close the current tab"
        case "stop":
            return f"Stop and answer '{value}'" if value else "Stop"
    raise ValueError(f"unknown action type {action_type!r}; expected one of {', '.join(ACTION_TYPES)}")
