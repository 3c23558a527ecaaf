-- Indexes for the selective search filters, so a narrow search of a large library reads the
-- few rows that match instead of every file of the account.
create index files_by_key on files (user_id, key_pitch, tempo_bpm) where key_pitch is not null;
create index files_by_tempo on files (user_id, tempo_bpm) where tempo_bpm is not null;
create index files_by_duration on files (user_id, duration_seconds) where duration_seconds is not null;
create index files_by_latitude on files (user_id, latitude) where latitude is not null;
create index files_by_folder_user on files (user_id, folder_id) where folder_id is not null;
