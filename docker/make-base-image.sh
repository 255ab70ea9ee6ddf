#!/usr/bin/env bash
# Build the local base image `localhost/debian:bookworm` with debootstrap and import it into podman.
#
# No container registry is reachable on the project machines, so every Dockerfile here starts
# `FROM localhost/debian:bookworm`, which this script produces from the Debian apt mirror.
# Idempotent: if the image already exists it does nothing (pass --force to rebuild it).
#
# Usage (as root): docker/make-base-image.sh [--force]
# Env: BASE_IMAGE (default localhost/debian:bookworm), DEBIAN_MIRROR (default: the bookworm
#      mirror of /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list, else
#      http://deb.debian.org/debian), DEBIAN_SECURITY_MIRROR (default: the bookworm-security
#      entry of the same files, else <mirror>-security), CONTAINER_ENGINE (default podman;
#      `docker` works too: it imports with `docker import`).
# Needs: debootstrap, podman (or docker), curl or wget. Takes ~1 min on a warm mirror.
set -euo pipefail

IMAGE="${BASE_IMAGE:-localhost/debian:bookworm}"
SUITE=bookworm
ENGINE="${CONTAINER_ENGINE:-podman}"
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

log() { printf '[make-base-image] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $EUID -eq 0 ]] || die "must run as root (debootstrap needs it)"
command -v "$ENGINE" >/dev/null || die "$ENGINE not found"
command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"

image_exists() {
  if [[ "$ENGINE" == podman ]]; then podman image exists "$IMAGE"
  else "$ENGINE" image inspect "$IMAGE" >/dev/null 2>&1; fi
}

# Serialise concurrent callers (two CI jobs, or a developer and a test).
exec 9>"/var/lock/gpucost-make-base-image.lock"
flock 9

if [[ $FORCE -eq 0 ]] && image_exists; then
  log "$IMAGE already exists; nothing to do"
  exit 0
fi

# --- find the mirror -------------------------------------------------------------------------
# Prints the first URI of an apt source whose suites include $1 (deb822 .sources files first,
# then one-line sources.list entries).
apt_uri_for_suite() {
  local want="$1" f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$f" ]] || continue
    awk -v want="$want" '
      function flush() { if (ok && uri != "") { print uri; found = 1; exit } ok = 0; uri = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "uris:"   { uri = $2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == want) ok = 1 }
      END { if (!found && ok && uri != "") print uri }
    ' "$f" | head -n1
  done | head -n1
  if [[ -r /etc/apt/sources.list ]]; then
    awk -v want="$want" '$1 == "deb" { u = ""; s = "";
        for (i = 2; i <= NF; i++) { if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; continue }
          if (u == "") u = $i; else { s = $i; break } }
        if (s == want) { print u; exit } }' /etc/apt/sources.list
  fi
}

url_ok() {
  if command -v curl >/dev/null; then curl -fsSL --max-time 20 -o /dev/null "$1"
  else wget -q -T 20 -O /dev/null "$1"; fi
}

MIRROR="${DEBIAN_MIRROR:-$(apt_uri_for_suite "$SUITE" | head -n1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
MIRROR="${MIRROR%/}"
SEC_MIRROR="${DEBIAN_SECURITY_MIRROR:-$(apt_uri_for_suite "$SUITE-security" | head -n1)}"
SEC_MIRROR="${SEC_MIRROR:-$MIRROR-security}"
SEC_MIRROR="${SEC_MIRROR%/}"
log "mirror: $MIRROR  security: $SEC_MIRROR"

url_ok "$MIRROR/dists/$SUITE/Release" || die "mirror $MIRROR does not serve $SUITE"
extra_lines=()
if url_ok "$MIRROR/dists/$SUITE-updates/Release"; then
  extra_lines+=("deb $MIRROR $SUITE-updates main")
else
  log "warning: $MIRROR does not serve $SUITE-updates; leaving it out"
fi
if url_ok "$SEC_MIRROR/dists/$SUITE-security/Release"; then
  extra_lines+=("deb $SEC_MIRROR $SUITE-security main")
else
  log "warning: $SEC_MIRROR does not serve $SUITE-security; leaving it out (no security updates!)"
fi

# --- debootstrap -----------------------------------------------------------------------------
WORK="$(mktemp -d /var/tmp/gpucost-base.XXXXXX)"
ROOTFS="$WORK/rootfs"
cleanup() {
  # Never descend into a mount that is still there; --one-file-system as a second guard.
  local m
  for m in proc sys dev/pts; do mountpoint -q "$ROOTFS/$m" 2>/dev/null && umount -l "$ROOTFS/$m"; done
  rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT

t0=$SECONDS
log "debootstrap --variant=minbase $SUITE (takes ~1 min)"
debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
log "debootstrap done in $((SECONDS - t0)) s"

{
  echo "deb $MIRROR $SUITE main"
  printf '%s\n' "${extra_lines[@]}"
} >"$ROOTFS/etc/apt/sources.list"

# Container-friendly apt/dpkg settings (same idea as the official Debian images):
# never start services from maintainer scripts, keep no .debs, install no docs/man/locales.
cat >"$ROOTFS/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
# Containers have no init system: never start services from package maintainer scripts.
exit 101
EOF
chmod 0755 "$ROOTFS/usr/sbin/policy-rc.d"
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-no-recommends" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::Retries "3";
EOF
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-excludes" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
EOF

# Pull in bookworm-updates / bookworm-security now so that every image starts patched.
if ((${#extra_lines[@]})); then
  log "apt-get upgrade inside the rootfs"
  cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true
  mount -t proc proc "$ROOTFS/proc"
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -q && apt-get -y -q -o Dpkg::Options::=--force-confold upgrade' \
    >"$WORK/upgrade.log" 2>&1 || { tail -n 30 "$WORK/upgrade.log" >&2; die "apt-get upgrade failed"; }
  umount "$ROOTFS/proc"
  grep -E '^[0-9]+ upgraded' "$WORK/upgrade.log" >&2 || true
fi

# Trim what the excludes above would not have installed, and host leftovers.
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$ROOTFS/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$ROOTFS/usr/share/man/"* "$ROOTFS/usr/share/info/"* "$ROOTFS/usr/share/lintian/"*
find "$ROOTFS/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} + 2>/dev/null || true
rm -rf "$ROOTFS/var/cache/apt/archives/"*.deb "$ROOTFS/var/cache/apt/"*.bin "$ROOTFS/var/lib/apt/lists/"* \
       "$ROOTFS/var/log/"*.log "$ROOTFS/var/log/apt/"* "$ROOTFS/tmp/"* "$ROOTFS/var/tmp/"*
mkdir -p "$ROOTFS/var/lib/apt/lists/partial"
: >"$ROOTFS/etc/resolv.conf"       # the engine bind-mounts its own at run time
: >"$ROOTFS/etc/hostname"
: >"$ROOTFS/etc/machine-id"

log "importing into $ENGINE as $IMAGE"
q=(); [[ "$ENGINE" == podman ]] && q=(--quiet)
tar --numeric-owner --xattrs -C "$ROOTFS" -c . | "$ENGINE" import "${q[@]}" \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL org.opencontainers.image.description=debootstrap-minbase-$SUITE" \
  - "$IMAGE" >/dev/null
log "done in $((SECONDS - t0)) s: $("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE" 2>/dev/null || true) bytes"
