"""Review: what a change does to each device between two revisions (fabricgen plan)."""
