#!/usr/bin/env python3
"""Helpers for running docker/kubernetes/*.yaml under podman 4.3's `podman kube play`, which
lacks some of what those manifests use (see docs/deployment.md):

  secrets FILE PASSWORD        one line per Secret: NAME, a tab, the podman-secret JSON
                               (`{"KEY": base64(value)}`, the form 4.3's secretKeyRef reads;
                               4.3 stores a played Secret as its YAML text, which it then cannot
                               read). CHANGE_ME in the values is replaced by PASSWORD.
  job-pods FILE                the file's ConfigMaps, then each Job's pod template as a Pod named
                               after the Job, restartPolicy Never (4.3 plays no Jobs), as YAML.
  unpublished FILE             the file without the containers' `ports` lists, as YAML: 4.3
                               publishes every containerPort on all host addresses (hostPort =
                               containerPort), so a second replica cannot start and the pods
                               would be reachable from outside the host.
  probe FILE DEPLOYMENT KIND   the exec command of a container probe (readinessProbe,
                               livenessProbe, startupProbe) of the Deployment's first container,
                               one argument per line.
  replicas FILE DEPLOYMENT     spec.replicas of the Deployment.
  cronjob-command FILE         the command and args of the first CronJob's container, one per
                               line (the container test runs it as its Job would).
  secret-value FILE NAME KEY PASSWORD   the value of a Secret's key, CHANGE_ME as PASSWORD.
  compose-entrypoint FILE SERVICE       a compose service's entrypoint, one argument per line,
                               `$$` unescaped to `$` as compose does.
"""
import base64
import json
import sys

import yaml


def docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def secrets(path, password):
    for d in docs(path):
        if d.get("kind") != "Secret":
            continue
        values = dict(d.get("stringData") or {})
        for key, b64 in (d.get("data") or {}).items():
            values[key] = base64.b64decode(b64).decode()
        encoded = {k: base64.b64encode(v.replace("CHANGE_ME", password).encode()).decode()
                   for k, v in values.items()}
        print(f"{d['metadata']['name']}\t{json.dumps(encoded)}")


def job_pods(path):
    out = [d for d in docs(path) if d.get("kind") == "ConfigMap"]
    for d in docs(path):
        if d.get("kind") != "Job":
            continue
        template = d["spec"]["template"]
        spec = dict(template["spec"])
        spec["restartPolicy"] = "Never"
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": d["metadata"]["name"],
                                 "labels": (template.get("metadata") or {}).get("labels", {})},
                    "spec": spec})
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


def unpublished(path):
    out = docs(path)
    for d in out:
        spec = d.get("spec") or {}
        pod_spec = (spec.get("template") or {}).get("spec") or (spec if d.get("kind") == "Pod" else {})
        for container in pod_spec.get("containers", []) + pod_spec.get("initContainers", []):
            container.pop("ports", None)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


def deployment(path, name):
    for d in docs(path):
        if d.get("kind") == "Deployment" and d["metadata"]["name"] == name:
            return d
    sys.exit(f"no Deployment {name} in {path}")


def probe(path, name, kind):
    container = deployment(path, name)["spec"]["template"]["spec"]["containers"][0]
    print("\n".join(container[kind]["exec"]["command"]))


def cronjob_command(path):
    for d in docs(path):
        if d.get("kind") == "CronJob":
            container = d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
            print("\n".join(container.get("command", []) + container.get("args", [])))
            return
    sys.exit(f"no CronJob in {path}")


def secret_value(path, name, key, password):
    for d in docs(path):
        if d.get("kind") == "Secret" and d["metadata"]["name"] == name:
            values = dict(d.get("stringData") or {})
            for k, b64 in (d.get("data") or {}).items():
                values[k] = base64.b64decode(b64).decode()
            print(values[key].replace("CHANGE_ME", password))
            return
    sys.exit(f"no Secret {name} in {path}")


def compose_entrypoint(path, service):
    with open(path, encoding="utf-8") as f:
        entry = yaml.safe_load(f)["services"][service]["entrypoint"]
    print("\n".join(arg.replace("$$", "$") for arg in entry))


def main(argv):
    commands = {"secrets": (secrets, 2), "job-pods": (job_pods, 1), "probe": (probe, 3),
                "cronjob-command": (cronjob_command, 1), "secret-value": (secret_value, 4),
                "compose-entrypoint": (compose_entrypoint, 2),
                "unpublished": (unpublished, 1),
                "replicas": (lambda p, n: print(deployment(p, n)["spec"].get("replicas", 1)), 2)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        sys.exit(__doc__)
    commands[argv[1]][0](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
