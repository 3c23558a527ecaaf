# Redis from Debian's packages, for the one-host compose file: the workers' doorbell and the
# rate limits' counters (the jobs themselves wait in PostgreSQL). Appends every write to its log
# in the volume at /data, so the counters outlive a restart. It asks for
# REDIS_PASSWORD (required), handed to redis-server on its stdin rather than its command line,
# which any process of the host may read.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
USER redis
WORKDIR /data
ENV REDIS_PORT=6379 REDIS_BIND=127.0.0.1
HEALTHCHECK --interval=5s --timeout=3s CMD REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping | grep -q PONG || exit 1
CMD ["sh", "-c", ": \"${REDIS_PASSWORD:?set REDIS_PASSWORD}\"; exec redis-server - --port \"$REDIS_PORT\" --bind \"$REDIS_BIND\" --dir /data --appendonly yes --save '' <<EOF\nrequirepass $REDIS_PASSWORD\nEOF"]
