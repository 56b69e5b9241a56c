// The Python lexer: strings of every prefix and quote, comments, logical
// lines (Newline tokens) across brackets and splices, and recovery from
// brackets left open while typing.
#include "engine/analysis/python_lexer.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

std::vector<std::string> texts(std::string_view source) {
  std::vector<std::string> out;
  for (const auto& t : lex_python(source).tokens) {
    out.push_back(t.kind == TokenKind::Newline ? "NL" : std::string(t.text(source)));
  }
  return out;
}

using V = std::vector<std::string>;

TEST(PythonLexerTest, StringPrefixesAndTripleQuotes) {
  EXPECT_EQ(texts("a = r'\\'' + b\"x\" + f'{y}' + Rb'z' + '''#\n(''' # c\n"),
            (V{"a", "=", "r'\\''", "+", "b\"x\"", "+", "f'{y}'", "+", "Rb'z'", "+", "'''#\n('''", "# c", "NL"}));
}

TEST(PythonLexerTest, NewlinesEndLogicalLinesOnlyOutsideBracketsAndSplices) {
  EXPECT_EQ(texts("x = f(1,\n      2)\ny = 1 + \\\n    2\n\n# only a comment\nz\n"),
            (V{"x", "=", "f", "(", "1", ",", "2", ")", "NL", "y", "=", "1", "+", "2", "NL", "# only a comment", "z", "NL"}));
}

TEST(PythonLexerTest, OperatorsLongestMatch) {
  EXPECT_EQ(texts("a **= b // c @ d -> e := f ... g != h\n"),
            (V{"a", "**=", "b", "//", "c", "@", "d", "->", "e", ":=", "f", "...", "g", "!=", "h", "NL"}));
}

TEST(PythonLexerTest, NumbersWithUnderscoresExponentsAndHex) {
  EXPECT_EQ(texts("1_000 1e-5 0x1e+2 3.5j .5\n"), (V{"1_000", "1e-5", "0x1e", "+", "2", "3.5j", ".5", "NL"}));
}

TEST(PythonLexerTest, DecoratorIsAnAtAtTheStartOfALine) {
  const std::string source = "@torch.no_grad()\ndef f(): pass\n";
  const auto tokens = lex_python(source).tokens;
  EXPECT_EQ(tokens[0].text(source), "@");
  EXPECT_TRUE(tokens[0].line_start);
  EXPECT_EQ(texts(source), (V{"@", "torch", ".", "no_grad", "(", ")", "NL", "def", "f", "(", ")", ":", "pass", "NL"}));
}

TEST(PythonLexerTest, UnterminatedSingleQuotedStringEndsAtItsLine) {
  const std::string source = "s = 'open\nt = 1\n";
  const PythonLex lex = lex_python(source);
  EXPECT_EQ(texts(source), (V{"s", "=", "'open", "NL", "t", "=", "1", "NL"}));
  EXPECT_TRUE(lex.tokens[2].unterminated);
  ASSERT_EQ(lex.problems.size(), 1u);
  EXPECT_EQ(lex.problems[0].message, "unterminated string literal");
  EXPECT_EQ(lex.problems[0].span, (Span{4, 9}));
}

TEST(PythonLexerTest, UnterminatedTripleQuotedStringRunsToTheEnd) {
  const std::string source = "s = \"\"\"open\ndef f(): pass\n";
  const PythonLex lex = lex_python(source);
  EXPECT_EQ(texts(source), (V{"s", "=", "\"\"\"open\ndef f(): pass\n", "NL"}));
  ASSERT_EQ(lex.problems.size(), 1u);
  EXPECT_EQ(lex.problems[0].message, "unterminated triple-quoted string: it runs to the end of the file");
}

TEST(PythonLexerTest, AStatementKeywordClosesBracketsLeftOpen) {
  const std::string source = "y = f(x\nreturn y\n";
  const PythonLex lex = lex_python(source);
  EXPECT_EQ(texts(source), (V{"y", "=", "f", "(", "x", "NL", "return", "y", "NL"}));
  ASSERT_EQ(lex.problems.size(), 1u);
  EXPECT_EQ(lex.problems[0].message, "unclosed '(' (closed at line 2 to read on)");
  EXPECT_EQ(lex.problems[0].span, (Span{5, 6}));
}

TEST(PythonLexerTest, ComprehensionKeywordsInsideBracketsDoNotClose) {
  EXPECT_EQ(texts("r = [x\n     for x in y\n     if x]\n"), (V{"r", "=", "[", "x", "for", "x", "in", "y", "if", "x", "]", "NL"}));
  EXPECT_TRUE(lex_python("r = [x\n     for x in y\n     if x]\n").problems.empty());
}

TEST(PythonLexerTest, ADecoratorAtTheBracketsIndentationClosesThem) {
  const std::string source = "class A:\n    x = g(1,\n    @dec\n    def f(self): pass\n";
  const PythonLex lex = lex_python(source);
  EXPECT_EQ(texts(source), (V{"class", "A", ":", "NL", "x", "=", "g", "(", "1", ",", "NL", "@", "dec", "NL", "def", "f", "(",
                              "self", ")", ":", "pass", "NL"}));
  EXPECT_EQ(lex.problems.size(), 1u);
}

TEST(PythonLexerTest, UnclosedBracketAtTheEndIsListed) {
  const PythonLex lex = lex_python("x = [1, 2");
  ASSERT_EQ(lex.problems.size(), 1u);
  EXPECT_EQ(lex.problems[0].message, "unclosed '[' (closed at line 1 to read on)");
  EXPECT_EQ(lex.tokens.back().kind, TokenKind::Newline);
}

}  // namespace
}  // namespace hiera::engine::analysis
