-- What a file request has taken of its owner's storage: the files that arrived through it and
-- the files its onArrival jobs made of them (an unzip of an arrived archive, say), while they
-- are not trashed. One definition for the senders' check against `maxBytes` and for the room
-- an onArrival job works within.
create function request_files_bytes(request uuid) returns bigint language sql stable as $$
    select coalesce(sum(f.file_size), 0)::bigint from files f
    where f.trashed_at is null and f.id in (
        select a.file_id from request_arrivals a where a.request_id = request
        union
        select o.file_id from file_job_outputs o
        join request_arrivals a on a.job_id = o.job_id
        where a.request_id = request)
$$;
