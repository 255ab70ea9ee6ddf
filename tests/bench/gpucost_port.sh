# Sourced by the benchmark scripts that start gpucost with --port 0. Waits until the server whose
# log goes to $1 has logged its port and answers /healthz, then prints the port; fails when it
# has not after $2 tries (default 500), $3 seconds apart (default 0.02).
gpucost_port() {
    local log=$1 tries=${2:-500} pause=${3:-0.02} port
    for _ in $(seq "$tries"); do
        port=$(grep -so '"port":[0-9]*' "$log" | head -1 | cut -d: -f2 || true)
        if [[ -n "$port" ]] && curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; then
            echo "$port"
            return 0
        fi
        sleep "$pause"
    done
    return 1
}
