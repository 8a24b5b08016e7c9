#!/bin/sh
# Renders the load balancer's configuration: fills in teaagent.conf's placeholders and prints
# the result. Used by docker-compose.yml and by the tests (tests/support/services.rs).
#
#   TEAAGENT_UPSTREAMS  the replicas, HOST:PORT separated by spaces (required)
#   TEAAGENT_LISTEN     what `listen` takes, e.g. `443 ssl` (required)
#   TEAAGENT_TLS        a file of TLS directives to include (tls.conf); empty: plain HTTP, which
#                       only the tests use, on loopback
#
#   render.sh [TEMPLATE] > /etc/nginx/conf.d/teaagent.conf
#
# Fails, printing nothing, when a variable is missing or a value does not look like what it
# should be, or when the template holds a placeholder it does not know.
set -eu

template=${1:-$(dirname "$0")/teaagent.conf}
: "${TEAAGENT_UPSTREAMS:?the replicas, HOST:PORT separated by spaces}"
: "${TEAAGENT_LISTEN:?what listen takes, e.g. 443 ssl}"
tls=${TEAAGENT_TLS:-}

rendered=$(awk -v upstreams="$TEAAGENT_UPSTREAMS" -v listen="$TEAAGENT_LISTEN" -v tls="$tls" '
    function fail(why) { print "render.sh: " why > "/dev/stderr"; failed = 1; exit 1 }
    function indent() { match($0, /^[ \t]*/); return substr($0, 1, RLENGTH) }
    BEGIN {
        if (listen !~ /^[][A-Za-z0-9.:_ -]+$/) fail("TEAAGENT_LISTEN: not a listen address: " listen)
        if (tls !~ /^[A-Za-z0-9._\/-]*$/) fail("TEAAGENT_TLS: not a file name: " tls)
        n = split(upstreams, servers, " ")
        if (n == 0) fail("TEAAGENT_UPSTREAMS: no replica")
        for (i = 1; i <= n; i++)
            if (servers[i] !~ /^([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):[0-9]+$/)
                fail("TEAAGENT_UPSTREAMS: not HOST:PORT: " servers[i])
    }
    /^[ \t]*@UPSTREAMS@[ \t]*$/ { pad = indent(); for (i = 1; i <= n; i++) print pad "server " servers[i] ";"; next }
    /^[ \t]*@LISTEN@[ \t]*$/    { print indent() "listen " listen ";"; next }
    /^[ \t]*@TLS@[ \t]*$/       { if (tls != "") print indent() "include " tls ";"; next }
    /@[A-Z_]+@/ && !/^[ \t]*#/  { fail("unknown placeholder at line " NR ": " $0) }
    { print }
' "$template")
printf '%s\n' "$rendered"
