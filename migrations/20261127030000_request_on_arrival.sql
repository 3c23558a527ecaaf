-- A job run on each file a request takes (`onArrival`: `{ "jobType": …, "options": … }` as the
-- job row keeps it), and the job each arrival started.
alter table file_requests add column on_arrival jsonb;
alter table request_arrivals add column job_id uuid references file_jobs (id) on delete set null;
