-- What became of a task's attached parts (`raw` saved as a file, `url` imported), by the part's
-- index in the task's first message: written once each, so a task taken over after its worker
-- died neither saves nor imports a part twice.
alter table agent_tasks add column attachments jsonb not null default '{}';

-- Files a task proposed to move to the trash (`trash_files`: ids, names, and the words that
-- confirm it), and the task whose message confirmed it (`usedBy`): only the next task of the
-- conversation can, once.
alter table agent_tasks add column proposal jsonb;
