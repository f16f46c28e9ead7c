"""The two pieces of state code from the articles: the transactional chat and the versioned session."""
