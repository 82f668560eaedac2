// cxxmap: counts the words of a text in a std::map<std::string, int>,
// building a std::string from each word before looking it up.
// Root cause: an ordered map of strings, looked up with a freshly built
// std::string per word: a copy (a heap allocation for the longer words)
// and a dozen string comparisons down the tree for every word.
// Hotspot #1: count_words (the std::map and std::string code inlined into
// it or instantiated from the headers, memcmp, malloc, is charged to it).
// Expected tag: container.
// Fix: std::unordered_map with a transparent hash looked up with
// std::string_view (or intern the words once and count by index).
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include "workload.h"

typedef std::map<std::string, int> word_counts;

// Count each word of words[0..n) in counts.
NOINLINE static void count_words(const char *const *words, size_t n, word_counts &counts)
{
	for (size_t i = 0; i < n; i++)
		counts[std::string(words[i])]++;
}

// A vocabulary of made-up words, some longer than the small-string buffer.
static std::vector<std::string> make_vocabulary(size_t n)
{
	static const char *const stems[] = {
		"account", "balance", "customer", "delivery", "estimate",
		"forecast", "inventory", "ledger", "payment", "shipment",
	};
	static const char *const suffixes[] = {
		"", "s", "_total", "_adjustment", "_reconciliation_report",
	};
	std::vector<std::string> vocab;

	for (size_t i = 0; i < n; i++)
		vocab.push_back(std::string(stems[i % 10]) + suffixes[(i / 10) % 5] +
				std::to_string(i / 50));
	return vocab;
}

// A text of nwords words drawn from vocab, common words more often.
static std::vector<const char *> make_text(const std::vector<std::string> &vocab, size_t nwords)
{
	std::vector<const char *> text;
	unsigned long x = 0x9e3779b97f4a7c15ul;

	for (size_t i = 0; i < nwords; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t r = x % vocab.size();
		text.push_back(vocab[r * r / vocab.size()].c_str());
	}
	return text;
}

int main(int argc, char **argv)
{
	double end = wl_now() + wl_seconds(argc, argv);
	std::vector<std::string> vocab = make_vocabulary(2000);
	std::vector<const char *> text = make_text(vocab, 20000);
	word_counts counts;

	while (wl_now() < end)
		count_words(text.data(), text.size(), counts);
	wl_sink = counts.size();
	return counts.empty();
}
