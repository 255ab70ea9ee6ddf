#!/usr/bin/env python3
"""Loads YAML files the way strict tools do (redocly, openapi-typescript, Swagger UI) and fails
on what PyYAML's default loader lets through silently:

- a key given twice in one mapping (PyYAML keeps the last one, strict loaders stop);
- a flow-mapping entry without a value, which is what an unquoted comma inside a flow-style
  description produces: `{type: number, description: expected, ideal / goodput}` reads as a
  property named `ideal / goodput`.

Usage: strict_yaml_check.py FILE... ; prints one line per problem, exits 1 when any.
"""
import sys

import yaml


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate keys and value-less flow-mapping entries."""

    problems: list

    def __init__(self, stream):
        super().__init__(stream)
        self.problems = []


def _where(mark):
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _is_implicit_null(node):
    return (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"
            and node.value == "" and node.style is None)


def _construct_mapping(loader, node, deep=False):
    first_seen = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = key_node.value
        if key in first_seen:
            loader.problems.append(
                f"{_where(key_node.start_mark)}: duplicate key '{key}' "
                f"(first at {first_seen[key]})")
        else:
            first_seen[key] = _where(key_node.start_mark)
        if node.flow_style and _is_implicit_null(value_node):
            loader.problems.append(
                f"{_where(key_node.start_mark)}: flow-mapping entry '{key}' has no value "
                "(an unquoted comma inside a description? quote the description)")
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def check(path):
    with open(path, encoding="utf-8") as stream:
        loader = StrictLoader(stream)
        try:
            loader.get_single_data()
        except yaml.YAMLError as error:
            loader.problems.append(f"not YAML: {error}")
        finally:
            loader.dispose()
    return [f"{path}: {problem}" for problem in loader.problems]


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1])
        return 2
    problems = [problem for path in paths for problem in check(path)]
    for problem in problems:
        print(problem)
    print(f"strict YAML: {len(paths)} file(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
