/* lock-per-item: matches */
void example(void)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&q->lock);
		push(q, items[i]);
		pthread_mutex_unlock(&q->lock);
	}
}
