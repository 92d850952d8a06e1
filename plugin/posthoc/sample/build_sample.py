"""Rebuild the sample corpus files (``python -m posthoc.sample.build_sample``); not used at run time.

The texts are short news-like stories written for this project (not copied from anywhere); the
ground truth links them to real Wikipedia titles. The two systems' outputs (``E2E`` and ``REL``,
named after the systems of paper 000) are derived from the ground truth by a seeded, documented
perturbation so that they differ the way real linkers do: missed mentions, other (plausible, the
``alt`` title) links, shifted boundaries, an extra nested mention inside a longer one, a NIL
instead of a link, and false positives on weekday / month names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATASET = "sample-news"
SEED = 20240607

# id -> (text, [(surface, title or None for NIL, alternative title a linker might pick or None)])
# mentions are listed in text order; each is found after the previous one.
DOCS: list[tuple[str, str, list[tuple[str, str | None, str | None]]]] = [
    ("news-01",
     "The European Central Bank kept its main interest rate unchanged on Thursday, President Christine Lagarde "
     "told reporters in Frankfurt. Economists at Deutsche Bank and BNP Paribas had expected the pause after "
     "inflation in the euro area eased to 2.4 percent in November. Lagarde said the Governing Council would "
     "watch wage growth in Germany and Spain closely before any cut.",
     [("European Central Bank", "European Central Bank", None), ("Christine Lagarde", "Christine Lagarde", None),
      ("Frankfurt", "Frankfurt", "Frankfurt (Oder)"), ("Deutsche Bank", "Deutsche Bank", None),
      ("BNP Paribas", "BNP Paribas", None), ("euro area", "Eurozone", "Euro"),
      ("Lagarde", "Christine Lagarde", None), ("Governing Council", "European Central Bank", None),
      ("Germany", "Germany", "Germany national football team"), ("Spain", "Spain", "Spain national football team")]),
    ("news-02",
     "Zoë Adams scored twice as Arsenal beat Chelsea 3-1 at the Emirates Stadium on Sunday, lifting the north "
     "London club back to the top of the Premier League. Chelsea manager Mauricio Pochettino blamed a tired "
     "squad after the midweek Champions League trip to Naples. ⚽🔥 Fans celebrated on Holloway Road until late.",
     [("Zoë Adams", None, "Tony Adams"), ("Arsenal", "Arsenal F.C.", "Arsenal W.F.C."),
      ("Chelsea", "Chelsea F.C.", "Chelsea, London"), ("Emirates Stadium", "Emirates Stadium", None),
      ("London", "London", None), ("Premier League", "Premier League", None),
      ("Chelsea", "Chelsea F.C.", "Chelsea, London"), ("Mauricio Pochettino", "Mauricio Pochettino", None),
      ("Champions League", "UEFA Champions League", "AFC Champions League"), ("Naples", "Naples", "S.S.C. Napoli"),
      ("Holloway Road", "Holloway Road", None)]),
    ("news-03",
     "Toyota said on Tuesday it will build a new battery plant near Nagoya, its third in Japan. Chairman Akio "
     "Toyoda announced the plan at the company's headquarters in Toyota City (豊田市), Aichi Prefecture. Shares "
     "rose 2% on the Tokyo Stock Exchange (東京証券取引所). Rival Honda and the trading house Mitsubishi "
     "Corporation are expected to supply parts.",
     [("Toyota", "Toyota", "Toyota, Aichi"), ("Nagoya", "Nagoya", None), ("Japan", "Japan", None),
      ("Akio Toyoda", "Akio Toyoda", None), ("Toyota City", "Toyota, Aichi", "Toyota"),
      ("豊田市", "Toyota, Aichi", None), ("Aichi Prefecture", "Aichi Prefecture", None),
      ("Tokyo Stock Exchange", "Tokyo Stock Exchange", None), ("東京証券取引所", "Tokyo Stock Exchange", None),
      ("Honda", "Honda", "Soichiro Honda"), ("Mitsubishi Corporation", "Mitsubishi Corporation", "Mitsubishi")]),
    ("news-04",
     "Premier François Legault opened a new public library in Montre\u0301al on Friday, next to the cafe\u0301 "
     "where Leonard Cohen once wrote. The building, designed by the firm of architect Moshe Safdie, faces the "
     "Saint Lawrence River. Mayor Vale\u0301rie Plante said the city of Québec had sent books in French and "
     "Inuktitut for the opening.",
     [("François Legault", "François Legault", None), ("Montre\u0301al", "Montreal", None),
      ("Leonard Cohen", "Leonard Cohen", None), ("Moshe Safdie", "Moshe Safdie", None),
      ("Saint Lawrence River", "Saint Lawrence River", None), ("Vale\u0301rie Plante", "Valérie Plante", None),
      ("Québec", "Quebec City", "Quebec"), ("French", "French language", "French people"),
      ("Inuktitut", "Inuktitut", None)]),
    ("news-05",
     "🇺🇦 Ukraine and 🇵🇱 Poland signed a grain transit deal in Warsaw on Monday. Ukrainian President Volodymyr "
     "Zelenskyy and Polish Prime Minister Donald Tusk agreed that wheat will move by rail to the port of Gdańsk "
     "while shipping in the Black Sea stays risky. The European Commission welcomed the deal.",
     [("Ukraine", "Ukraine", None), ("Poland", "Poland", None), ("Warsaw", "Warsaw", None),
      ("Volodymyr Zelenskyy", "Volodymyr Zelenskyy", None), ("Donald Tusk", "Donald Tusk", None),
      ("Gdańsk", "Gdańsk", "Port of Gdańsk"), ("Black Sea", "Black Sea", None),
      ("European Commission", "European Commission", "European Union")]),
    ("news-06",
     "Apple showed a thinner iPhone 📱 at its campus in Cupertino on Wednesday. Chief executive Tim Cook said the "
     "phone uses a modem designed in-house instead of chips from Qualcomm. The processors are made by TSMC in "
     "Taiwan. Analysts expect Samsung and Google to answer with new Android handsets before Christmas.",
     [("Apple", "Apple Inc.", "Apple"), ("iPhone", "IPhone", None), ("Cupertino", "Cupertino, California", None),
      ("Tim Cook", "Tim Cook", None), ("Qualcomm", "Qualcomm", None), ("TSMC", "TSMC", None),
      ("Taiwan", "Taiwan", "Taiwan (island)"), ("Samsung", "Samsung Electronics", "Samsung"),
      ("Google", "Google", "Google Search"), ("Android", "Android (operating system)", "Android (robot)"),
      ("Christmas", "Christmas", None)]),
    ("news-07",
     "Astronomers using the James Webb Space Telescope have found carbon dioxide in the atmosphere of a planet "
     "around a nearby star, NASA said. The team, led from Johns Hopkins University in Baltimore with colleagues "
     "at the European Space Agency, also imaged a faint disk of dust. The Andromeda Galaxy was not part of the "
     "survey.",
     [("James Webb Space Telescope", "James Webb Space Telescope", None), ("carbon dioxide", "Carbon dioxide", None),
      ("NASA", "NASA", None), ("Johns Hopkins University", "Johns Hopkins University", "Johns Hopkins"),
      ("Baltimore", "Baltimore", "Baltimore County, Maryland"),
      ("European Space Agency", "European Space Agency", None),
      ("Andromeda Galaxy", "Andromeda Galaxy", "Andromeda (constellation)")]),
    ("news-08",
     "Heavy snow closed Munich Airport on Saturday, and Lufthansa cancelled more than 700 flights. Deutsche Bahn "
     "also halted trains to Salzburg.",
     [("Munich Airport", "Munich Airport", "Munich"), ("Lufthansa", "Lufthansa", None),
      ("Deutsche Bahn", "Deutsche Bahn", None), ("Salzburg", "Salzburg", "Salzburg (state)")]),
    ("news-09",
     "Chinese carmaker BYD sold more electric cars than Tesla in the last quarter, the company said in Shenzhen "
     "(深圳). Founder Wang Chuanfu thanked buyers in Europe and Brazil. Elon Musk replied on X that the "
     "Shanghai factory had been closed for upgrades. BYD shares rose 4% on the Hong Kong Stock Exchange.",
     [("BYD", "BYD Auto", "BYD Company"), ("Tesla", "Tesla, Inc.", "Nikola Tesla"), ("Shenzhen", "Shenzhen", None),
      ("深圳", "Shenzhen", None), ("Wang Chuanfu", "Wang Chuanfu", None), ("Europe", "Europe", None),
      ("Brazil", "Brazil", None), ("Elon Musk", "Elon Musk", None), ("X", "Twitter", "X"),
      ("Shanghai", "Shanghai", "Giga Shanghai"), ("BYD", "BYD Auto", "BYD Company"),
      ("Hong Kong Stock Exchange", "Hong Kong Stock Exchange", None)]),
    ("news-10",
     "Beyonce\u0301 will close her tour with three nights at Wembley Stadium in London next June, promoter Live "
     "Nation said. Tickets sold out within an hour, beating the record Taylor Swift set last year. The singer "
     "will also headline the Glastonbury Festival, the BBC reported, with Jay-Z expected as a guest. 🎤✨",
     [("Beyonce\u0301", "Beyoncé", None), ("Wembley Stadium", "Wembley Stadium", "Wembley"),
      ("London", "London", None), ("Live Nation", "Live Nation Entertainment", None),
      ("Taylor Swift", "Taylor Swift", None), ("Glastonbury Festival", "Glastonbury Festival", "Glastonbury"),
      ("BBC", "BBC", "BBC News"), ("Jay-Z", "Jay-Z", None)]),
    ("news-11",
     "Samsung Electronics said profit tripled as demand for memory chips used in artificial intelligence servers "
     "soared. Chairman Lee Jae-yong met Nvidia chief Jensen Huang in Seoul (서울) last week. Rival SK Hynix, "
     "based in Icheon, is the main supplier of high-bandwidth memory to Nvidia.",
     [("Samsung Electronics", "Samsung Electronics", None), ("artificial intelligence", "Artificial intelligence",
                                                                None),
      ("Lee Jae-yong", "Lee Jae-yong (businessman)", "Lee Jae-yong"), ("Nvidia", "Nvidia", None),
      ("Jensen Huang", "Jensen Huang", None), ("Seoul", "Seoul", None), ("서울", "Seoul", None),
      ("SK Hynix", "SK Hynix", "SK Group"), ("Icheon", "Icheon", None),
      ("high-bandwidth memory", "High Bandwidth Memory", None), ("Nvidia", "Nvidia", None)]),
    ("news-12",
     "Brazilian President Luiz Inácio Lula da Silva promised to end illegal logging in the Amazon rainforest by "
     "2030, speaking in Belém ahead of the climate summit. Environment minister Marina Silva said Norway and "
     "Germany had paid new money into the Amazon Fund.",
     [("Luiz Inácio Lula da Silva", "Luiz Inácio Lula da Silva", None),
      ("Amazon rainforest", "Amazon rainforest", "Amazon River"), ("Belém", "Belém", None),
      ("Marina Silva", "Marina Silva", None), ("Norway", "Norway", None), ("Germany", "Germany", None),
      ("Amazon Fund", "Amazon Fund", None)]),
    ("news-13",
     "Kylian Mbappé scored a late winner as Real Madrid beat Barcelona 2-1 at the Santiago Bernabéu on Saturday. "
     "The result puts Carlo Ancelotti's side four points clear in La Liga. Barcelona coach Hansi Flick said "
     "his team had been unlucky, while fans in Catalonia blamed the referee.",
     [("Kylian Mbappé", "Kylian Mbappé", None), ("Real Madrid", "Real Madrid CF", None),
      ("Barcelona", "FC Barcelona", "Barcelona"), ("Santiago Bernabéu", "Santiago Bernabéu Stadium",
                                                   "Santiago Bernabéu"),
      ("Carlo Ancelotti", "Carlo Ancelotti", None), ("La Liga", "La Liga", None),
      ("Barcelona", "FC Barcelona", "Barcelona"), ("Hansi Flick", "Hansi Flick", None),
      ("Catalonia", "Catalonia", None)]),
    ("news-14",
     "👩‍💻 Developers at Microsoft can now use GitHub Copilot inside every Azure project, chief executive Satya "
     "Nadella told a conference in Seattle. The assistant runs on models from OpenAI. Staff at the Redmond "
     "headquarters have tested it since March.",
     [("Microsoft", "Microsoft", None), ("GitHub Copilot", "GitHub Copilot", "GitHub"),
      ("Azure", "Microsoft Azure", None), ("Satya Nadella", "Satya Nadella", None), ("Seattle", "Seattle", None),
      ("OpenAI", "OpenAI", None), ("Redmond", "Redmond, Washington", "Redmond, Oregon")]),
    ("news-15",
     "Kenya's President William Ruto flew from Nairobi to Addis Ababa for the African Union summit, where "
     "leaders discussed a single air transport market. Ethiopia and Kenya also agreed to extend the Safaricom "
     "mobile money service M-Pesa across the border.",
     [("Kenya", "Kenya", None), ("William Ruto", "William Ruto", None), ("Nairobi", "Nairobi", None),
      ("Addis Ababa", "Addis Ababa", None), ("African Union", "African Union", None), ("Ethiopia", "Ethiopia", None),
      ("Kenya", "Kenya", None), ("Safaricom", "Safaricom", None), ("M-Pesa", "M-Pesa", None)]),
    ("news-16",
     "The Indian Space Research Organisation will launch a sample-return mission to the Moon in 2027, four years "
     "after Chandrayaan-3 (चंद्रयान-3) landed near the lunar south pole. Prime Minister Narendra Modi visited "
     "the control centre in Bengaluru, and the rocket will lift off from Sriharikota.",
     [("Indian Space Research Organisation", "Indian Space Research Organisation", None), ("Moon", "Moon", None),
      ("Chandrayaan-3", "Chandrayaan-3", "Chandrayaan programme"), ("चंद्रयान-3", "Chandrayaan-3", None),
      ("lunar south pole", "Lunar south pole", None), ("Narendra Modi", "Narendra Modi", None),
      ("Bengaluru", "Bengaluru", None), ("Sriharikota", "Sriharikota", "Satish Dhawan Space Centre")]),
    ("news-17",
     "Paris Saint-Germain signed the Georgian winger Khvicha Kvaratskhelia from Napoli for €70 million, the club "
     "said on Friday.",
     [("Paris Saint-Germain", "Paris Saint-Germain F.C.", "Paris"),
      ("Khvicha Kvaratskhelia", "Khvicha Kvaratskhelia", None), ("Napoli", "S.S.C. Napoli", "Naples")]),
    ("news-18",
     "Firefighters in New South Wales battled more than 60 bushfires west of Sydney on Sunday as temperatures "
     "passed 44 °C in the Blue Mountains. Prime Minister Anthony Albanese promised federal help from Canberra, "
     "and the Bureau of Meteorology warned of dry lightning. The Rural Fire Service asked residents of Katoomba "
     "to leave early.",
     [("New South Wales", "New South Wales", None), ("Sydney", "Sydney", None),
      ("Blue Mountains", "Blue Mountains (New South Wales)", "Blue Mountains"),
      ("Anthony Albanese", "Anthony Albanese", None), ("Canberra", "Canberra", "Government of Australia"),
      ("Bureau of Meteorology", "Bureau of Meteorology", None),
      ("Rural Fire Service", "New South Wales Rural Fire Service", None), ("Katoomba", "Katoomba, New South Wales",
                                                                           None)]),
    ("news-19",
     "Mexico's President Claudia Sheinbaum said state oil company Pemex will cut its debt by half before 2030. "
     "Speaking in Mexico City, she also asked the United States to stop guns moving south across the Rio Grande "
     "from Texas. The Banco de México left rates unchanged.",
     [("Mexico", "Mexico", None), ("Claudia Sheinbaum", "Claudia Sheinbaum", None), ("Pemex", "Pemex", None),
      ("Mexico City", "Mexico City", None), ("United States", "United States", None),
      ("Rio Grande", "Rio Grande", None), ("Texas", "Texas", None), ("Banco de México", "Bank of Mexico", None)]),
    ("news-20",
     "Thousands watched the 🐉 dragon boat races on Victoria Harbour in Hong Kong (香港) for the Tuen Ng Festival. "
     "Cathay Pacific flew in teams from Macau and Guangdong, and the noodle chain 𠮷野家 handed out free bowls. "
     "Rain stopped the final race. 🌧️",
     [("Victoria Harbour", "Victoria Harbour", None), ("Hong Kong", "Hong Kong", None), ("香港", "Hong Kong", None),
      ("Tuen Ng Festival", "Dragon Boat Festival", None), ("Cathay Pacific", "Cathay Pacific", None),
      ("Macau", "Macau", None), ("Guangdong", "Guangdong", None), ("𠮷野家", "Yoshinoya", None)]),
]

# system -> rates of each kind of difference from the ground truth
SYSTEMS = {
    "E2E": {"miss": 0.16, "other_link": 0.10, "shift": 0.08, "nil": 0.04, "nested": 0.6, "false_positive": 0.6},
    "REL": {"miss": 0.08, "other_link": 0.18, "shift": 0.05, "nil": 0.07, "nested": 0.3, "false_positive": 0.3},
}
# a name inside a longer mention that a linker may also mark (an extra overlapping mention)
NESTED = {
    "Real Madrid": ("Madrid", "Madrid"), "Tokyo Stock Exchange": ("Tokyo", "Tokyo"),
    "Hong Kong Stock Exchange": ("Hong Kong", "Hong Kong"),
    "Johns Hopkins University": ("Johns Hopkins", "Johns Hopkins"),
    "New South Wales": ("Wales", "Wales"), "Munich Airport": ("Munich", "Munich"), "Toyota City": ("Toyota", "Toyota"),
    "Samsung Electronics": ("Samsung", "Samsung"), "Emirates Stadium": ("Emirates", "Emirates (airline)"),
    "Wembley Stadium": ("Wembley", "Wembley"), "Aichi Prefecture": ("Aichi", "Aichi Prefecture"),
    "Paris Saint-Germain": ("Paris", "Paris"), "Amazon Fund": ("Amazon", "Amazon rainforest"),
    "Bank of Mexico": ("Mexico", "Mexico"), "Banco de México": ("México", "Mexico"),
    "Saint Lawrence River": ("Saint Lawrence", "Lawrence of Rome"),
    "Mitsubishi Corporation": ("Mitsubishi", "Mitsubishi"),
    "GitHub Copilot": ("GitHub", "GitHub"), "Andromeda Galaxy": ("Andromeda", "Andromeda (mythology)"),
}
_CALENDAR = re.compile(r"\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|"
                       r"May|June|July|August|September|October|November|December)\b")


def _url(title: str | None) -> str | None:
    return None if title is None else "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")


def ground_truth() -> list[dict[str, object]]:
    """One record per document with GT mentions (start, end, surface, link, alt)."""
    records: list[dict[str, object]] = []
    for doc_id, text, specs in DOCS:
        assert 100 <= len(text) <= 700, (doc_id, len(text))
        cursor = 0
        mentions: list[dict[str, object]] = []
        for surface, title, alt in specs:
            start = text.index(surface, cursor)
            cursor = start + len(surface)
            mentions.append({"start": start, "end": cursor, "surface": surface, "link": _url(title), "alt": alt})
        records.append({"id": doc_id, "text": text, "mentions": mentions})
    return records


def _shift(text: str, start: int, end: int) -> tuple[int, int]:
    """A realistic boundary error: drop the last word of a multi-word mention, else take in the word before."""
    surface = text[start:end]
    if " " in surface:
        return start, start + surface.rindex(" ")
    before = text[:start].rstrip()
    if before and before[-1].isalpha():
        word_start = len(before) - len(before.split()[-1])
        return word_start, end
    return start, min(len(text), end + 1) if end < len(text) and text[end].isalnum() else end


def system_output(name: str, records: list[dict[str, object]], rng: np.random.Generator) -> list[dict[str, object]]:
    rates = SYSTEMS[name]
    out = []
    for record in records:
        text = str(record["text"])
        mentions: list[dict[str, object]] = []
        for gt in record["mentions"]:  # type: ignore[attr-defined]
            roll = rng.random(6)
            start, end, link = gt["start"], gt["end"], gt["link"]
            if roll[0] < rates["miss"]:
                continue
            if roll[1] < rates["other_link"] and gt["alt"]:
                link = _url(gt["alt"])
            elif roll[2] < rates["nil"]:
                link = None
            if roll[3] < rates["shift"]:
                start, end = _shift(text, start, end)
            mentions.append({"start": start, "end": end, "surface": text[start:end], "link": link})
            nested = NESTED.get(str(gt["surface"]))
            inner = gt["start"] + str(gt["surface"]).index(nested[0]) if nested else -1
            if roll[4] < rates["nested"] and nested and (inner, inner + len(nested[0])) != (start, end):
                mentions.append({"start": inner, "end": inner + len(nested[0]), "surface": nested[0],
                                 "link": _url(nested[1])})
        for match in _CALENDAR.finditer(text):
            if rng.random() < rates["false_positive"] / 2:
                mentions.append({"start": match.start(), "end": match.end(), "surface": match.group(),
                                 "link": _url(match.group())})
        mentions.sort(key=lambda m: (m["start"], m["end"]))
        out.append({"id": record["id"], "text": text, "mentions": mentions})
    return out


def _write(path: Path, records: list[dict[str, object]], system: str) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            mentions = [{k: m[k] for k in ("start", "end", "surface", "link")} for m in record["mentions"]]  # type: ignore[attr-defined]
            line = {"id": record["id"], "dataset": DATASET, "system": system, "text": record["text"],
                    "mentions": mentions}
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def main() -> None:
    rng = np.random.default_rng(SEED)
    records = ground_truth()
    _write(HERE / "gt.jsonl", records, "GT")
    for name in SYSTEMS:
        _write(HERE / f"{name.lower()}.jsonl", system_output(name, records, rng), name)


if __name__ == "__main__":
    main()
