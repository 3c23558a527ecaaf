-- What became of a task's attached parts (`raw` saved as a file, `url` imported), by the part's
-- index in the task's first message: written once each, so a task taken over after its worker
-- died neither saves nor imports a part twice.
alter table agent_tasks add column attachments jsonb not null default '{}';
