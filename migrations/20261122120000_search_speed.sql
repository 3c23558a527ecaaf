-- Name order without sorting the whole library. Per folder: a search of a folder subtree in name
-- order reads each folder's first page from this index and sorts only those, instead of every file
-- under the folder.
create index files_in_folder_by_name on files (user_id, folder_id, lower(file_name), id)
    where trashed_at is null and derivative_of is null and folder_id is not null;
-- Per account: the first page of the whole library in name order is read off the index.
create index files_by_name on files (user_id, lower(file_name), id)
    where trashed_at is null and derivative_of is null;
