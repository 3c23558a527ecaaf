-- Whether a stored folder path is `folder` itself or a folder inside it ("/a/b" is within "/a";
-- "/ab" is not). One definition for every query that narrows to a folder subtree.
create function path_within(path text, folder text) returns boolean
    language sql immutable
    return path = folder or left(path, length(folder) + 1) = folder || '/';
