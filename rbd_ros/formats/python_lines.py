"""
Lines of generated Python source, wrapped to the project's width (``setup.cfg``'s flake8).

What the generators share (``rbd_ros.algorithms.generate_calls``, the single-state calls;
``rbd_ros.batch.generate_kernels``, the batch kernels): a call, a condition, a return, each
one line where it fits and broken the way a person would break it where it does not.
"""
import textwrap

WIDTH = 99          # setup.cfg's flake8 max-line-length is 100


def wrapped(head, arguments, indent, tail=""):
    """Return ``head(arguments)tail`` at ``indent``, its arguments wrapped under the paren."""
    line = " " * indent + f"{head}({', '.join(arguments)}){tail}"
    if len(line) <= WIDTH:
        return line
    hang = " " * (indent + len(head) + 1)
    text = textwrap.fill(", ".join(arguments) + ")" + tail, WIDTH,
                         initial_indent=hang, subsequent_indent=hang,
                         break_on_hyphens=False, break_long_words=False)
    return " " * indent + head + "(" + text[len(hang):]


def condition(keyword, tests, indent, tail=":"):
    """
    Return ``keyword tests[0] and tests[1] ...tail`` at ``indent``, wrapped in parentheses.

    A test too long for a line breaks at its ``or``.
    """
    line = " " * indent + f"{keyword} {' and '.join(tests)}{tail}"
    if len(line) <= WIDTH:
        return line
    hang = " " * (indent + len(keyword) + 2)
    lines, current = [], " " * indent + f"{keyword} ({tests[0]}"
    for test in tests[1:]:
        if len(current) + len(test) + 5 <= WIDTH:
            current += " and " + test
            continue
        lines.append(current)
        current = hang + "and " + test
        if len(current) > WIDTH and " or " in test:
            first, rest = current.split(" or ", 1)
            lines.append(first)
            current = hang + " " * 5 + "or " + rest
            pieces = current.split(" and ")     # still too long: its terms a line each
            while len(current) > WIDTH and len(pieces) > 1:
                cut = max(k for k in range(1, len(pieces))
                          if k == 1 or len(" and ".join(pieces[:k])) <= WIDTH)
                lines.append(" and ".join(pieces[:cut]))
                pieces = [hang + " " * 5 + "and " + pieces[cut]] + pieces[cut + 1:]
                current = " and ".join(pieces)
    return "\n".join(lines + [current + ")" + tail])


def returned(returns, indent):
    """Return the call's ``return`` line, a long ``Name(arguments)`` wrapped."""
    line = " " * indent + f"return {returns}"
    if len(line) <= WIDTH or not returns.endswith(")"):
        return line
    head, arguments = returns[:-1].split("(", 1)
    return wrapped(f"return {head}", arguments.split(", "), indent)


def grouped(source):
    """Return the expression ``source`` in parentheses where it is a conditional one."""
    return f"({source})" if " if " in source else source
