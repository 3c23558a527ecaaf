# PostgreSQL 15 from Debian's packages, for the one-host compose file. Its data lives in the
# volume at /var/lib/postgresql/data; the first start makes the cluster and the `drive`
# database, with the password in POSTGRES_PASSWORD (scram-sha-256 for every connection).
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
COPY postgres-start /usr/local/bin/postgres-start
USER postgres
ENV PGDATA=/var/lib/postgresql/data PGPORT=5432
HEALTHCHECK --interval=5s --timeout=3s CMD pg_isready -h 127.0.0.1 -p "$PGPORT" -q || exit 1
ENTRYPOINT ["postgres-start"]
