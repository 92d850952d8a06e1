"""States, provinces and countries, for combined marking's "city followed by its state" evidence.

Paper 003, Sect. 5.2: the combined tagging module "should also be extended to deal with locations
that are followed by the state in which they are located, e.g., 'Grosse Pointe Park, Mich'", to be
merged into one annotation linked to ``dbr:Grosse_Pointe_Park,_Michigan``.

:func:`region_of` maps a surface form or a Wikipedia title to the canonical name of a *region* that
follows a city in news style: a U.S. state (its name, its AP-style abbreviation with or without the
full stop, its postal code), a Canadian province, an Australian state, or a country (a built-in list
of English short names and common abbreviations; not exhaustive, so a missing one only costs a
proposal, never makes a false one).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final
from urllib.parse import unquote

#: U.S. state -> (AP abbreviation, postal code).
US_STATES: Final = {
    "Alabama": ("Ala", "AL"), "Alaska": ("Alaska", "AK"), "Arizona": ("Ariz", "AZ"), "Arkansas": ("Ark", "AR"),
    "California": ("Calif", "CA"), "Colorado": ("Colo", "CO"), "Connecticut": ("Conn", "CT"),
    "Delaware": ("Del", "DE"), "Florida": ("Fla", "FL"), "Georgia": ("Ga", "GA"), "Hawaii": ("Hawaii", "HI"),
    "Idaho": ("Idaho", "ID"), "Illinois": ("Ill", "IL"), "Indiana": ("Ind", "IN"), "Iowa": ("Iowa", "IA"),
    "Kansas": ("Kan", "KS"), "Kentucky": ("Ky", "KY"), "Louisiana": ("La", "LA"), "Maine": ("Maine", "ME"),
    "Maryland": ("Md", "MD"), "Massachusetts": ("Mass", "MA"), "Michigan": ("Mich", "MI"),
    "Minnesota": ("Minn", "MN"), "Mississippi": ("Miss", "MS"), "Missouri": ("Mo", "MO"),
    "Montana": ("Mont", "MT"), "Nebraska": ("Neb", "NE"), "Nevada": ("Nev", "NV"),
    "New Hampshire": ("N.H", "NH"), "New Jersey": ("N.J", "NJ"), "New Mexico": ("N.M", "NM"),
    "New York": ("N.Y", "NY"), "North Carolina": ("N.C", "NC"), "North Dakota": ("N.D", "ND"),
    "Ohio": ("Ohio", "OH"), "Oklahoma": ("Okla", "OK"), "Oregon": ("Ore", "OR"), "Pennsylvania": ("Pa", "PA"),
    "Rhode Island": ("R.I", "RI"), "South Carolina": ("S.C", "SC"), "South Dakota": ("S.D", "SD"),
    "Tennessee": ("Tenn", "TN"), "Texas": ("Texas", "TX"), "Utah": ("Utah", "UT"), "Vermont": ("Vt", "VT"),
    "Virginia": ("Va", "VA"), "Washington": ("Wash", "WA"), "West Virginia": ("W.Va", "WV"),
    "Wisconsin": ("Wis", "WI"), "Wyoming": ("Wyo", "WY"), "District of Columbia": ("D.C", "DC"),
}
#: Older or variant abbreviations seen in news wires (Reuters-128 writes "Kent" and "Tex").
US_VARIANTS: Final = {"Kent": "Kentucky", "Tex": "Texas", "Penn": "Pennsylvania", "Wisc": "Wisconsin",
                      "Calif.": "California", "Cal": "California", "Mass.": "Massachusetts", "Okla.": "Oklahoma",
                      "Wash. D.C": "District of Columbia", "Washington D.C": "District of Columbia"}
CANADA: Final = {"Alberta": "Alta", "British Columbia": "B.C", "Manitoba": "Man", "New Brunswick": "N.B",
                 "Newfoundland": "Nfld", "Nova Scotia": "N.S", "Ontario": "Ont", "Prince Edward Island": "P.E.I",
                 "Quebec": "Que", "Saskatchewan": "Sask", "Yukon": "Yukon", "Northwest Territories": "N.W.T"}
AUSTRALIA: Final = {"New South Wales": "NSW", "Victoria": "Vic", "Queensland": "Qld", "Tasmania": "Tas",
                    "Western Australia": "WA", "South Australia": "SA"}
COUNTRIES: Final = (
    "Afghanistan", "Albania", "Algeria", "Angola", "Argentina", "Armenia", "Australia", "Austria", "Azerbaijan",
    "Bahamas", "Bahrain", "Bangladesh", "Barbados", "Belarus", "Belgium", "Belize", "Benin", "Bhutan", "Bolivia",
    "Bosnia and Herzegovina", "Botswana", "Brazil", "Brunei", "Bulgaria", "Burkina Faso", "Burma", "Burundi",
    "Cambodia", "Cameroon", "Canada", "Chad", "Chile", "China", "Colombia", "Congo", "Costa Rica", "Croatia",
    "Cuba", "Cyprus", "Czech Republic", "Czechoslovakia", "Denmark", "Djibouti", "Dominican Republic", "Ecuador",
    "Egypt", "El Salvador", "Eritrea", "Estonia", "Ethiopia", "Fiji", "Finland", "France", "Gabon", "Gambia",
    "Germany", "West Germany", "East Germany", "Ghana", "Greece", "Guatemala", "Guinea", "Guyana", "Haiti",
    "Honduras", "Hong Kong", "Hungary", "Iceland", "India", "Indonesia", "Iran", "Iraq", "Ireland", "Israel",
    "Italy", "Ivory Coast", "Jamaica", "Japan", "Jordan", "Kazakhstan", "Kenya", "Kosovo", "Kuwait", "Kyrgyzstan",
    "Laos", "Latvia", "Lebanon", "Lesotho", "Liberia", "Libya", "Liechtenstein", "Lithuania", "Luxembourg",
    "Macedonia", "Madagascar", "Malawi", "Malaysia", "Maldives", "Mali", "Malta", "Mauritania", "Mauritius",
    "Mexico", "Moldova", "Monaco", "Mongolia", "Montenegro", "Morocco", "Mozambique", "Myanmar", "Namibia", "Nepal",
    "Netherlands", "Holland", "New Zealand", "Nicaragua", "Niger", "Nigeria", "North Korea", "Norway", "Oman",
    "Pakistan", "Panama", "Papua New Guinea", "Paraguay", "Peru", "Philippines", "Poland", "Portugal",
    "Puerto Rico", "Qatar", "Romania", "Russia", "Rwanda", "Saudi Arabia", "Scotland", "Senegal", "Serbia",
    "Sierra Leone", "Singapore", "Slovakia", "Slovenia", "Somalia", "South Africa", "South Korea", "Soviet Union",
    "Spain", "Sri Lanka", "Sudan", "Suriname", "Swaziland", "Sweden", "Switzerland", "Syria", "Taiwan",
    "Tajikistan", "Tanzania", "Thailand", "Togo", "Trinidad and Tobago", "Tunisia", "Turkey", "Turkmenistan",
    "Uganda", "Ukraine", "United Arab Emirates", "United Kingdom", "United States", "Uruguay", "Uzbekistan",
    "Venezuela", "Vietnam", "Wales", "England", "Northern Ireland", "Yemen", "Yugoslavia", "Zaire", "Zambia",
    "Zimbabwe",
)
COUNTRY_VARIANTS: Final = {"U.S": "United States", "US": "United States", "USA": "United States",
                           "U.S.A": "United States", "United States of America": "United States",
                           "U.K": "United Kingdom", "UK": "United Kingdom", "Britain": "United Kingdom",
                           "Great Britain": "United Kingdom", "People's Republic of China": "China",
                           "Republic of Ireland": "Ireland", "Korea": "South Korea", "Russian Federation": "Russia",
                           "UAE": "United Arab Emirates", "U.S.S.R": "Soviet Union", "USSR": "Soviet Union"}


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().rstrip(".")).casefold()


@lru_cache(maxsize=1)
def _regions() -> dict[str, str]:
    table: dict[str, str] = {}
    for name, (ap, postal) in US_STATES.items():
        for form in (name, ap, postal):
            table[_key(form)] = name
    for name, abbreviation in (*CANADA.items(), *AUSTRALIA.items()):
        table[_key(name)] = name
        table.setdefault(_key(abbreviation), name)
    for form, name in US_VARIANTS.items():
        table[_key(form)] = name
    for name in COUNTRIES:
        table[_key(name)] = name
    for form, name in COUNTRY_VARIANTS.items():
        table[_key(form)] = name
    return table


def region_of(surface: str) -> str:
    """The canonical region named by ``surface`` ("N.J." -> "New Jersey"), or "" when it names none.

    Two-letter postal codes count only when written in capitals ("OR", not "or").
    """
    text = surface.strip()
    if not text or not text[0].isupper():
        return ""
    bare = text.rstrip(".")
    if len(bare) == 2 and bare.isalpha() and not bare.isupper():
        return ""
    return _regions().get(_key(text), "")


def region_of_title(link: str) -> str:
    """The region a Wikipedia link's title names ("…/wiki/New_Jersey" -> "New Jersey"), or ""."""
    title = unquote(link.rsplit("/", 1)[-1]).replace("_", " ")
    title = re.sub(r"\s*\((?:state|U\.S\. state|country|province)\)$", "", title)
    return _regions().get(_key(title), "") if title[:1].isupper() else ""


def title_suffix_region(link: str) -> str | None:
    """For a title "City,_State" the region of "State" ("" if unknown); None when the title has no comma."""
    title = unquote(link.rsplit("/", 1)[-1]).replace("_", " ")
    if ", " not in title:
        return None
    return _regions().get(_key(title.rsplit(", ", 1)[1]), "")
